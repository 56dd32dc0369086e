package plates

// workSide is the long side, in pixels, of the image the network sees. A
// 12-megapixel photo is shrunk to 640×480, a 400-pixel web photo enlarged:
// the network was trained at this scale (train/plates/train.py, WORK).
const workSide = 640

// Settings are what an experiment varies in the finder (the tuning tools
// of train/plates and their PLATES_* variables); Detect and DetectIn run
// DefaultSettings(). A setting is a value passed down, never a package
// variable.
type Settings struct {
	WorkSide int       // the first stage's look, as workSide
	Propose  Decoding  // how the first stage's cells become proposals
	Judge    Judging   // the score that reports a plate, and the NMS
	Relook   Relooking // the second look at a proposal
}

// DefaultSettings are the settings the product runs.
func DefaultSettings() Settings {
	return Settings{
		WorkSide: workSide,
		// Proposing is deliberately permissive: at this threshold one of
		// the 24 strongest proposals at workSide lies on 95.6% of the web
		// plates and 99.2% of the dash-cam plates of the validation photos
		// (IoU ≥ 0.3 or centre inside), and the verifiers sort them.
		Propose: Decoding{Threshold: 0.08, NMSIoU: 0.35},
		// Judging was set on the validation split (train/plates/README.md),
		// never on held-out photos.
		Judge:  Judging{Accept: 0.75, First: 0.25, NMSIoU: 0.3, Text: 0.95, Within: 0.5, Read: true},
		Relook: Relooking{From: -1.5, Mean: true, Flip: true, Times: 1},
	}
}

// stride is the network's output cell size in working pixels.
const stride = 4

// Decoding holds the first stage's settings: how the network's cells
// become proposals.
type Decoding struct {
	Threshold float64 // a peak cell's plate probability to propose a box
	NMSIoU    float64 // boxes overlapping a stronger one this much are dropped
}

// Judging holds the second stage's settings.
type Judging struct {
	Accept float64 // the combined probability (score) to report a plate
	First  float64 // the weight of the first stage's log-odds in the score
	NMSIoU float64 // refined boxes overlapping a stronger one this much are dropped
	// Text is the score a text detector's proposal needs: the verifiers
	// learnt from the first stage's proposals, and judge text that is no
	// plate (signs, badges, captions) less surely.
	Text float64
	// Within is the share of a weaker detection's box lying inside a
	// stronger one's that makes it part of that plate, not a plate of its
	// own: the dealer's text on a plate's frame, a character group of a
	// large plate. Its IoU with the plate is small, so the NMS alone kept
	// it, and plate-logo painted a second design over the first.
	Within float64
	// Read has the lines that need it read and judged (read.go): a
	// proposal the judge accepts is a plate whatever Accept and Text say.
	Read bool
}
