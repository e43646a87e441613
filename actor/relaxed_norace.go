//go:build !race

package actor

func (r *relaxed) load() uintptr   { return r.v }
func (r *relaxed) store(v uintptr) { r.v = v }
