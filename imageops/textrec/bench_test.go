package textrec

import (
	"context"
	"fmt"
	"testing"

	"carphoto/imageops/internal/nn"
)

// BenchmarkRead times the network on lines 96, 160 and 320 pixels wide
// (one core: go test -bench Read -cpu 1).
func BenchmarkRead(b *testing.B) {
	n, err := embeddedNet()
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range []int{96, 160, 320} {
		b.Run(fmt.Sprint(w), func(b *testing.B) {
			x := nn.NewTensor(3, Height, w)
			for i := range x.Data {
				x.Data[i] = float32(i%255)/127.5 - 1
			}
			for b.Loop() {
				if _, err := n.read(context.Background(), x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
