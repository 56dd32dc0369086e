package imageops

import "carphoto/imageops/internal/nn"

// Arithmetic says how the vision networks run here: their calibrated
// layers on integers, with the kernel this CPU has, or all in float
// (CARPHOTO_NN=float); the answers are the same bytes with any kernel.
func Arithmetic() string { return nn.Arithmetic() }
