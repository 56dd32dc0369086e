//go:build !amd64 || purego

package nn

// has is empty where the assembly kernels are not built: the portable
// loops do all the work.
var has = features{}
