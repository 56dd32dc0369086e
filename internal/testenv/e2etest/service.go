package e2etest

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	_ "image/jpeg"
	"sync"
	"testing"

	"carphoto/internal/testenv/benchphoto"
)

// CarPhotoScaled is the car photo upscaled to about mp megapixels.
func CarPhotoScaled(t *testing.T, mp float64) []byte {
	t.Helper()
	b, err := benchphoto.Enlarge(context.Background(), CarPhoto(t), mp, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// BigPhoto is a 12-megapixel JPEG, slow enough to signal a worker mid-task.
func BigPhoto(t *testing.T) []byte {
	t.Helper()
	b, err := benchphoto.Enlarge(context.Background(), CarPhoto(t), 12, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// PlainJPEG is a smooth sky-to-ground gradient: a photo with no plate.
func PlainJPEG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 480, 320))
	for y := range 320 {
		for x := range 480 {
			img.Set(x, y, color.RGBA{uint8(100 + y/4), uint8(140 + y/5), uint8(200 - y/3), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Burst sends n concurrent calls with photo and counts their statuses.
func Burst(t *testing.T, n int, url, key string, photo []byte) map[int]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			status, _, _ := Post(t, url, key, File("image", photo))
			mu.Lock()
			counts[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return counts
}
