package nn

import (
	"fmt"
	"os"
)

// The CPU dispatch, in one place: which kernels the layers run, chosen
// once at start-up from the CPU's features (has: cpu_amd64.go, or
// cpu_other.go where the assembly is not built) and CARPHOTO_NN. Every
// kernel gives the same answers as the portable loop it mirrors; only the
// tests change the choice (SetIntegers, SetFloatKernels, SetIntKernel).

// features are the CPU's features the assembly kernels need.
type features struct {
	avx2   bool // AVX2 and FMA: the float kernels of 8 floats an instruction, the AVX2 integer kernel
	avx512 bool // AVX-512F: the float kernels of 16 floats an instruction
	vnni   bool // AVX-512F, BW and VNNI: the fastest integer kernel
}

// The integer kernels, in order of preference.
const (
	IntKernelGo = iota
	IntKernelAVX2
	IntKernelVNNI
)

// dispatch is the kernels the layers run.
type dispatch struct {
	avx2, avx512 bool // the float layers' AVX2 and AVX-512 kernels, over the portable loops
	// integers runs the layers with a calibrated range (Conv.InRange) on
	// integers; CARPHOTO_NN=float runs every layer in float, for
	// comparisons (docs/research/benchmarks-log.md).
	integers  bool
	intKernel int // IntKernelGo, IntKernelAVX2 or IntKernelVNNI
}

var use = dispatch{
	avx2:      has.avx2,
	avx512:    has.avx512,
	integers:  os.Getenv("CARPHOTO_NN") != "float",
	intKernel: bestInt(),
}

// bestInt is the fastest integer kernel this CPU runs.
func bestInt() int {
	switch {
	case has.vnni:
		return IntKernelVNNI
	case has.avx2:
		return IntKernelAVX2
	}
	return IntKernelGo
}

// Arithmetic says how the layers with a calibrated range run: on integers
// with which kernel, or in float.
func Arithmetic() string {
	if !use.integers {
		return "float (CARPHOTO_NN=float)"
	}
	return []string{"integer layers, portable loops", "integer layers, AVX2 kernels", "integer layers, AVX-512 VNNI kernels"}[use.intKernel]
}

// SetIntegers turns the integer layers on or off (off: every layer in float, for
// comparisons) and returns a function restoring the previous setting.
func SetIntegers(on bool) (restore func()) {
	prev := use.integers
	use.integers = on
	return func() { use.integers = prev }
}

// SetFloatKernels limits the float layers to the portable loops
// ("portable"), the AVX2 kernels ("avx2") or lets them use AVX-512 too
// ("avx512", where the CPU has it), for tests, and returns a function
// restoring the previous choice.
func SetFloatKernels(k string) (restore func()) {
	s2, s512 := use.avx2, use.avx512
	use.avx2 = s2 && k != "portable"
	use.avx512 = s512 && k == "avx512"
	return func() { use.avx2, use.avx512 = s2, s512 }
}

// SetIntKernel makes the integer layers use kernel k (for tests: every kernel
// gives the same integers) and returns a function restoring the previous
// one. It fails for a kernel this CPU lacks.
func SetIntKernel(k int) (restore func(), err error) {
	if k > bestInt() || (k == IntKernelVNNI && !has.vnni) || (k == IntKernelAVX2 && !has.avx2) {
		return nil, fmt.Errorf("nn: this CPU lacks integer kernel %d", k)
	}
	prev := use.intKernel
	use.intKernel = k
	return func() { use.intKernel = prev }, nil
}

// IntKernels lists the integer kernels this CPU runs.
func IntKernels() []int {
	ks := []int{IntKernelGo}
	if has.avx2 {
		ks = append(ks, IntKernelAVX2)
	}
	if has.vnni {
		ks = append(ks, IntKernelVNNI)
	}
	return ks
}
