//go:build !linux

package resultsanitizer

import (
	"errors"
	"os"
)

var errNoSeekData = errors.New("SEEK_DATA is not used on this system")

// seekData cannot tell data from holes here: the whole range is data.
func seekData(*os.File, uint64) (uint64, error) { return 0, errNoSeekData }

// seekHole cannot tell data from holes here: the whole range is data.
func seekHole(*os.File, uint64) (uint64, error) { return 0, errNoSeekData }
