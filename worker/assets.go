package worker

import (
	"context"
	"errors"
	"io/fs"

	"github.com/rs/zerolog"

	"carphoto"
	"carphoto/jobs"
)

// loadAsset reads a task's saved design or backdrop from the asset store,
// or returns the result that answers the call without it: an asset
// deleted since the web side found it is the caller's to fix, a store out
// of reach processing_failed (uncharged, like every failure).
func (w *Worker) loadAsset(ctx context.Context, log zerolog.Logger, key string) ([]byte, *jobs.Result) {
	if w.cfg.Assets == nil {
		log.Error().Str("asset", key).Msg("task names an asset, and this worker has no asset store")
		return nil, &jobs.Result{Code: carphoto.EProcessingFailed, Message: "processing failed on our side; you were not charged, please retry"}
	}
	data, err := w.cfg.Assets.Get(ctx, key)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &jobs.Result{Code: carphoto.EInvalidParams, Message: "the asset this call names was deleted while it ran; save the image again"}
	case err != nil:
		log.Error().Err(err).Str("asset", key).Msg("read asset from the store")
		return nil, &jobs.Result{Code: carphoto.EProcessingFailed, Message: "could not read the asset from the store; you were not charged, please retry"}
	}
	return data, nil
}
