package resultsanitizer

import (
	"errors"
	"fmt"
)

// CoreModule returns the first core module inside a component binary: for
// a rule pack (which imports nothing) its only module, for the pipeline
// its main module. The component's other parts (types, canonical
// functions, custom sections such as a pack's signature) are skipped.
func CoreModule(component []byte) ([]byte, error) {
	if len(component) < 8 || string(component[:4]) != "\x00asm" {
		return nil, errors.New("not a wasm binary")
	}
	if component[6] != 1 || component[7] != 0 {
		return nil, errors.New("not a component (layer 1)")
	}
	i := 8
	for i < len(component) {
		id := component[i]
		size, n := uleb(component[i+1:])
		if n == 0 {
			return nil, errors.New("bad section size")
		}
		start := i + 1 + n
		if start > len(component) || size > uint64(len(component)-start) {
			return nil, errors.New("section past the end")
		}
		end := start + int(size)
		if id == 1 {
			return component[start:end], nil
		}
		i = end
	}
	return nil, fmt.Errorf("no core module in the component")
}

func uleb(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}
