package stream

// WalkOK exports walkOK (validate_even_test.go) to the fuzz targets of
// package stream_test: the verdict on a result body of the walk over
// every value plus libpcp's layout rule, computed apart from Validate.
func WalkOK(r *Result) bool { return walkOK(r) }
