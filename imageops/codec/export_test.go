package codec

// DecodeNoRecover is Decode without its recover, so that FuzzDecode fails
// on a panic instead of seeing it turned into an error.
var DecodeNoRecover = decode
