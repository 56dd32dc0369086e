package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"carphoto"
)

// A form is what one endpoint's multipart body may hold: the fields it
// takes, the file fields among them with their size limits, and where a
// file too large for memory goes instead (a video, to the object store).
// Photos, assets and videos are all read by readForm, so a body is bounded,
// timed out and refused the same way on every endpoint.
type form struct {
	endpoint string           // for messages: "blur-plates", "POST /v1/assets"
	fields   []string         // every field accepted, files included
	files    map[string]int64 // file fields and their size limits
	slack    int64            // what the body may carry beyond its files: fields, framing
	timeout  time.Duration    // the upload's time limit, named when it passes
	// stream, if set, takes file fields instead of memory: it reads r to its
	// end and reports how many bytes it read, or its own failure.
	stream func(field string, r io.Reader) (int64, error)
	// sizeHint is the body's Content-Length, when it says: a file is read
	// into one buffer of about its size, not one grown by doubling.
	sizeHint int64
}

// formParts is what readForm read: each file in memory (or its size, when
// streamed), each other field trimmed.
type formParts struct {
	files  map[string][]byte
	sizes  map[string]int64
	names  map[string]string // the file names the client gave its files
	values map[string]string
	// invalid is the first problem with one field (unknown, sent twice, too
	// long): the endpoint answers it once it knows the body holds what it
	// must (the photo, the file), so that a missing photo is said first.
	invalid error
}

// has reports whether the body held the field.
func (p *formParts) has(name string) bool {
	_, file := p.sizes[name]
	_, value := p.values[name]
	return file || value
}

// readForm streams r's multipart body part by part, holding every part to
// its limit while reading and the whole body to the files' limits plus
// slack. Its error ends the call at once: a file or body past its limit
// (413, and the connection closes after the answer), the upload's read
// deadline (408), a body that stops parsing (400), a stream's own failure.
// A body that is not multipart/form-data at all is no error: it holds
// nothing, and the endpoint says what is missing.
func readForm(w http.ResponseWriter, r *http.Request, f form) (*formParts, error) {
	p := &formParts{files: map[string][]byte{}, sizes: map[string]int64{}, names: map[string]string{}, values: map[string]string{}}
	mt, params, err := mime.ParseMediaType(r.Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEMultipartForm || params["boundary"] == "" {
		return p, nil
	}
	body := f.slack
	for _, limit := range f.files {
		body += limit
	}
	r.Body = http.MaxBytesReader(w, r.Body, body)
	mr := multipart.NewReader(r.Body, params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return p, nil
		}
		if err != nil {
			if rerr := f.readErr(err, "the body"); carphoto.ErrorCode(rerr) != carphoto.EInvalidParams {
				return nil, rerr
			}
			// What follows cannot be parsed: close the connection after the
			// answer rather than have net/http drain the rest first.
			w.Header().Set(echo.HeaderConnection, "close")
			return nil, carphoto.Wrap(err, carphoto.EInvalidParams, "the body is not valid multipart/form-data: "+err.Error())
		}
		name := part.FormName()
		switch {
		case name == "":
			continue
		case !slices.Contains(f.fields, name):
			p.flag(carphoto.Errorf(carphoto.EInvalidParams, "unknown field %s for %s; accepted fields: %s",
				echoed(name), f.endpoint, strings.Join(f.fields, ", ")))
			continue
		case p.has(name):
			p.flag(carphoto.Errorf(carphoto.EInvalidParams, "field %s was sent more than once", echoed(name)))
			continue
		}
		if err := f.readPart(p, part, name); err != nil {
			return nil, err
		}
	}
}

// readSized reads r to its end into a buffer of hint bytes, grown only
// should r hold more, and trimmed to what it held when that is much less:
// reading a 25 MB file costs 25 MB, not the twice that a doubling buffer
// leaves behind.
func readSized(r io.Reader, hint int64) ([]byte, error) {
	if hint <= 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, 0, hint)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf, err
		}
	}
	if cap(buf)-len(buf) > 1<<20 {
		buf = slices.Clone(buf)
	}
	return buf, nil
}

// flag keeps err if it is the body's first problem with one field.
func (p *formParts) flag(err error) {
	if p.invalid == nil {
		p.invalid = err
	}
}

// readPart reads one accepted part into p, capped while reading: a file
// at its limit, a URL at maxURLBytes, any other field at maxFieldBytes.
func (f form) readPart(p *formParts, part *multipart.Part, name string) error {
	if limit, file := f.files[name]; file {
		in := &readRecorder{r: io.LimitReader(part, limit+1)}
		var n int64
		var err error
		if f.stream != nil {
			n, err = f.stream(name, in)
		} else {
			var data []byte
			data, err = readSized(in, min(limit+1, f.sizeHint))
			n = int64(len(data))
			p.files[name] = data
		}
		switch {
		case in.err != nil:
			return f.readErr(in.err, "field "+echoed(name))
		case err != nil:
			return err
		case n > limit:
			return tooLarge(name, limit)
		}
		p.sizes[name], p.names[name] = n, part.FileName()
		return nil
	}
	limit := int64(maxFieldBytes)
	if strings.HasSuffix(name, "Url") {
		limit = maxURLBytes
	}
	data, err := io.ReadAll(io.LimitReader(part, limit+1))
	switch {
	case err != nil:
		return f.readErr(err, "field "+echoed(name))
	case int64(len(data)) > limit:
		p.flag(carphoto.Errorf(carphoto.EInvalidParams, "field %s is longer than %d bytes", echoed(name), limit))
		data = nil
	}
	v := strings.TrimSpace(string(data))
	if v == "" && data != nil {
		// Sent empty is not left out: a client that sends style= asked for
		// something, and taking the default would answer (and charge) a
		// call it did not mean.
		p.flag(carphoto.Errorf(carphoto.EInvalidParams,
			"field %q is empty; send a value, or leave the field out to take its default", name))
	}
	p.values[name] = v
	return nil
}

// readErr names what went wrong reading what: the body past its limit,
// the upload's deadline, or a body cut short.
func (f form) readErr(err error, what string) error {
	var mbe *http.MaxBytesError
	switch {
	case errors.Is(err, errUploadsFull):
		return carphoto.Wrap(err, carphoto.EUnavailable,
			"this server is reading as many uploads as its memory allows; you were not charged, retry after Retry-After")
	case errors.As(err, &mbe):
		largest := int64(0)
		for _, limit := range f.files {
			largest = max(largest, limit)
		}
		return tooLarge("the request body", largest)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return uploadTimedOut(err, f.timeout)
	}
	return carphoto.Wrap(err, carphoto.EInvalidParams, "could not read "+what+": the upload was cut short")
}

// readRecorder remembers the error of reading the client's body, so that a
// stream's failure is told apart from the upload's.
type readRecorder struct {
	r   io.Reader
	err error
}

func (rr *readRecorder) Read(b []byte) (int, error) {
	n, err := rr.r.Read(b)
	if err != nil && err != io.EOF {
		rr.err = err
	}
	return n, err
}

// uploading runs read with the connection's read deadline timeout from
// now, or at deadline if that is sooner (a zero deadline is none), so a
// stalled or trickling upload ends as 408 request_timeout then, and
// settles the deadline after it (endUpload). With no timeout, or without a
// network connection (a test recorder: nothing can stall), read just runs.
func uploading(c echo.Context, timeout time.Duration, deadline time.Time, read func() error) error {
	if timeout <= 0 {
		return read()
	}
	until := time.Now().Add(timeout)
	if !deadline.IsZero() && until.After(deadline) {
		until = deadline
	}
	rc := http.NewResponseController(c.Response())
	if err := rc.SetReadDeadline(until); err != nil {
		return read()
	}
	return endUpload(c, rc, read())
}

// endUpload settles the read deadline once an upload's reading is over
// with err. After a body read in full it is cleared: the server reads on
// in the background to notice a client that goes away, and a deadline left
// in place would cancel the request at it. After a failure it stays, so
// whatever net/http reads of the rest of the body before answering ends
// by then. After a timeout it is moved to now and the answer says
// Connection: close: net/http would otherwise wait, without end, to drain
// a stalled body before sending the 408, holding the connection open.
func endUpload(c echo.Context, rc *http.ResponseController, err error) error {
	switch {
	case carphoto.ErrorCode(err) == carphoto.ERequestTimeout:
		c.Response().Header().Set(echo.HeaderConnection, "close")
		_ = rc.SetReadDeadline(time.Unix(1, 0))
	case err != nil:
	default:
		if derr := rc.SetReadDeadline(time.Time{}); derr != nil {
			return carphoto.Wrap(derr, carphoto.EInternal, "internal error")
		}
	}
	return err
}

// uploadTimedOut is the answer to a body still arriving at its limit.
func uploadTimedOut(err error, limit time.Duration) error {
	return carphoto.Wrap(err, carphoto.ERequestTimeout, fmt.Sprintf(
		"the upload did not arrive within %v; you were not charged, please retry (on a faster connection, or with a smaller file)", limit))
}

func tooLarge(what string, limit int64) error {
	return carphoto.Errorf(carphoto.EPayloadTooLarge, "%s is larger than the upload limit of %s", what, humanBytes(limit))
}

func humanBytes(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
