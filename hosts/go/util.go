package resultsanitizer

import "unicode/utf8"

func isUTF8(b []byte) bool { return utf8.Valid(b) }
