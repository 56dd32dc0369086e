package jobs

// EnqueueOnce is one try of Enqueue, for the tests that check which
// errors it rides through.
var EnqueueOnce = enqueueOnce
