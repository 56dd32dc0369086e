// Package carphoto holds the domain vocabulary every other package shares:
// the error codes of the public API and the Error type that carries them.
//
// The codes are wire API (spec part 7 plus the few this service adds):
// never rename or reorder them.
package carphoto

import (
	"errors"
	"fmt"
)

// Error codes. The first seven are the specification's; the rest name
// conditions the specification leaves open.
const (
	EInvalidAPIKey       = "invalid_api_key"      // 401
	EInsufficientCredits = "insufficient_credits" // 402
	ERateLimited         = "rate_limited"         // 429
	EUnknownTool         = "unknown_tool"         // 400
	EMissingImage        = "missing_image"        // 400
	EInvalidParams       = "invalid_params"       // 400
	EProcessingFailed    = "processing_failed"    // 500

	EPayloadTooLarge  = "payload_too_large"   // 413: upload over MAX_UPLOAD_BYTES
	EPlateNotFound    = "plate_not_found"     // 422: requirePlate=true and no plate found
	ENotFound         = "not_found"           // 404: unknown route or asset
	EMethodNotAllowed = "method_not_allowed"  // 405
	EUnavailable      = "service_unavailable" // 503: Redis unreachable, shutting down
	EInternal         = "internal"            // 500: a bug; never charged

	EAssetLimitReached = "asset_limit_reached" // 409: the account's Assets library is full
	ERequestTimeout    = "request_timeout"     // 408: the upload did not arrive within UPLOAD_TIMEOUT

	ERequestInProgress    = "request_in_progress"    // 409: the Idempotency-Key's first request is still running
	EIdempotencyKeyReused = "idempotency_key_reused" // 422: the Idempotency-Key was used for a different request

	ECarNotFound  = "car_not_found" // 422: car-cutout or car-shadow found no car in the photo
	ECarTruncated = "car_truncated" // 422: requireWholeCar=true and the photo's edge cuts the car off
	ECarOccluded  = "car_occluded"  // 422: requireWholeCar=true and a person stands in front of the car

	ERangeNotSatisfiable = "range_not_satisfiable" // 416: a Range past the end of a video job's result, or malformed
	EPreconditionFailed  = "precondition_failed"   // 412: If-Match or If-Unmodified-Since does not hold for a video job's result
)

// Error is a failure with a public code and a message that is safe to show
// to the client and says what to fix. Err is the cause: logged, never sent.
type Error struct {
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with the given code and message whose cause is err.
func Wrap(err error, code, message string) *Error {
	return &Error{Code: code, Message: message, Err: err}
}

// ErrorCode returns the code of the first *Error in err's chain, or EInternal
// when there is none (an unexpected failure is ours, not the client's).
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage returns the public message of the first *Error in err's chain,
// or a generic one that leaks nothing.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// Agree is one or many, by how many names a message lists: "crop is" and
// "crop, padding are", so that every message reads right either way.
func Agree(names []string, one, many string) string {
	if len(names) == 1 {
		return one
	}
	return many
}
