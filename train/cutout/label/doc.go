// Package label holds the car masks labelled here (issue 81) as the
// prompts and verdicts that make them: batch-NNN.json, written and rebuilt
// by label.py (README.md). Its test holds the rules the labels keep: no
// photo from a held-out split, the new masks' held-out fifth marked by the
// hash and never taken from the teacher as it came.
package label
