//go:build platestune

package plates

import (
	"os"
	"strings"
)

// PLATES_JURY=a.bin,b.bin,... replaces the embedded verifiers with these
// files, in this order, so the tuning tool can judge another jury without
// rebuilding the weights into the binary.
func init() {
	files := os.Getenv("PLATES_JURY")
	if files == "" {
		return
	}
	juryBins = nil
	for _, f := range strings.Split(files, ",") {
		data, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		juryBins = append(juryBins, data)
	}
}
