package jobs

import (
	"encoding/json"

	"carphoto/imageops"
)

// The queue's wire format of a photo task's parameters: jobs' own, so that
// imageops knows nothing of the queue.

// wireParams is imageops.Params as a task carries them: flat, by the API's
// names, without the op (the task's own field). Its fields, names and
// order stay as they are, so that a worker reads the tasks an older web
// process queued, and a call's parameters write the same bytes (an
// Idempotency-Key's record compares them).
type wireParams struct {
	Style        imageops.Style   `json:"style,omitempty"` // read with ParseStyle (Style.UnmarshalText)
	Reflection   bool             `json:"reflection,omitempty"`
	RequirePlate bool             `json:"requirePlate,omitempty"`
	Format       string           `json:"format,omitempty"`
	Crop         bool             `json:"crop,omitempty"`
	Padding      float64          `json:"padding,omitempty"`
	PaddingShare bool             `json:"paddingShare,omitempty"`
	Aspect       [2]int           `json:"aspect,omitempty"`
	Background   *imageops.Colour `json:"background,omitempty"`
	Position     string           `json:"position,omitempty"`
	Scale        float64          `json:"scale,omitempty"`
	Opacity      float64          `json:"opacity,omitempty"`
	Margin       float64          `json:"margin,omitempty"`
	Backdrop     bool             `json:"backdrop,omitempty"`
	FloorY       float64          `json:"floorY,omitempty"`
	CenterX      float64          `json:"centerX,omitempty"`
	// car-shadow's and car-cutout's.
	Plates          string `json:"plates,omitempty"`
	RequireWholeCar bool   `json:"requireWholeCar,omitempty"`
}

// wireOf is p as a task carries it.
func wireOf(p imageops.Params) wireParams {
	w := wireParams{
		Style: p.Style, Reflection: p.Reflection, RequirePlate: p.RequirePlate, Format: p.Format,
		Crop: p.Canvas.Crop, Padding: p.Canvas.Padding, PaddingShare: p.Canvas.PaddingShare, Aspect: p.Canvas.Aspect,
		Background: p.Background,
		Position:   p.Overlay.Position, Scale: p.Overlay.Scale, Opacity: p.Overlay.Opacity, Margin: p.Overlay.Margin,
		Plates: p.Plates.String(), RequireWholeCar: p.RequireWholeCar,
	}
	if b := p.Backdrop; b != nil {
		w.Backdrop, w.FloorY, w.Scale, w.CenterX = true, b.FloorY, b.Scale, b.CenterX
	}
	return w
}

// params are the Params of op that w carries.
func (w wireParams) params(op imageops.Op) (imageops.Params, error) {
	plates, err := imageops.ParsePlates(w.Plates)
	if err != nil {
		return imageops.Params{}, err
	}
	p := imageops.Params{
		Op: op, Style: w.Style, Reflection: w.Reflection, RequirePlate: w.RequirePlate, Format: w.Format,
		Canvas:     imageops.Canvas{Crop: w.Crop, Padding: w.Padding, PaddingShare: w.PaddingShare, Aspect: w.Aspect},
		Background: w.Background,
		Overlay:    imageops.OverlayOptions{Position: w.Position, Scale: w.Scale, Opacity: w.Opacity, Margin: w.Margin},
		Plates:     plates, RequireWholeCar: w.RequireWholeCar,
	}
	if w.Backdrop {
		p.Overlay.Scale = 0
		p.Backdrop = &imageops.Placement{FloorY: w.FloorY, Scale: w.Scale, CenterX: w.CenterX}
	}
	return p, nil
}

// ParamsJSON is p as a task carries it: the bytes an Idempotency-Key's
// record compares.
func ParamsJSON(p imageops.Params) ([]byte, error) { return json.Marshal(wireOf(p)) }

// LogParams is p as a log line records it: its wire form, the queue's
// field names, so that an operator reads what the task carried.
func LogParams(p imageops.Params) []byte {
	b, err := ParamsJSON(p)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}

// payloadJSON is Payload as JSON: its fields, and its Params in the wire
// format under "params".
type payloadJSON struct {
	payloadFields
	Params wireParams `json:"params"`
}

// payloadFields is Payload without its methods, for payloadJSON.
type payloadFields Payload

// MarshalJSON writes the task's payload.
func (p Payload) MarshalJSON() ([]byte, error) {
	return json.Marshal(payloadJSON{payloadFields(p), wireOf(p.Params)})
}

// UnmarshalJSON reads a task's payload, its Params' Op set from the
// payload's.
func (p *Payload) UnmarshalJSON(data []byte) error {
	var w payloadJSON
	err := json.Unmarshal(data, &w)
	if err != nil {
		return err
	}
	*p = Payload(w.payloadFields)
	p.Params, err = w.Params.params(p.Op)
	return err
}
