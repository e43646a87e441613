//go:build race

package actor

import "sync/atomic"

func (r *relaxed) load() uintptr   { return atomic.LoadUintptr(&r.v) }
func (r *relaxed) store(v uintptr) { atomic.StoreUintptr(&r.v, v) }
