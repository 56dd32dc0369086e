package imgtest

import "image"

// ListingPlates are the plates of docs/samples/listing.jpg (4000×2672) as
// its set labels them (plates-openimages-1500, at the photo's own size):
// a car's in the back row, far left, and the white car's own, front right,
// seen at a slant.
var ListingPlates = []image.Rectangle{image.Rect(120, 403, 232, 439), image.Rect(3698, 1466, 3934, 1779)}
