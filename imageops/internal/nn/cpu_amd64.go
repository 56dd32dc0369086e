//go:build amd64 && !purego

package nn

import "golang.org/x/sys/cpu"

// has is what this CPU offers the assembly kernels; the build tag purego
// leaves them out (cpu_other.go).
var has = features{
	avx2:   cpu.X86.HasAVX2 && cpu.X86.HasFMA,
	avx512: cpu.X86.HasAVX512F,
	vnni:   cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI,
}
