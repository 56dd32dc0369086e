package worker

import (
	"fmt"
	"testing"

	"carphoto"
)

// A client's mistake keeps its code and message in the worker's result
// (imageops' TestCarNotFound has car-cutout and car-shadow give
// car_not_found); anything else is processing_failed.
func TestFailureKeepsClientErrors(t *testing.T) {
	for _, code := range []string{carphoto.EInvalidParams, carphoto.EPlateNotFound, carphoto.ECarNotFound, carphoto.EProcessingFailed} {
		err := fmt.Errorf("frame: %w", carphoto.Errorf(code, "what the client did wrong"))
		if r := failure(err); r.Code != code || r.Message != carphoto.ErrorMessage(err) {
			t.Errorf("%s: the worker's result is %q %q; want the code and message kept", code, r.Code, r.Message)
		}
	}
	if r := failure(fmt.Errorf("disk on fire")); r.Code != carphoto.EProcessingFailed {
		t.Errorf("an internal error: the worker's result is %q; want %q", r.Code, carphoto.EProcessingFailed)
	}
}
