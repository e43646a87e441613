package actor

import "testing"

// TestTraceRenumbersRefs: the deterministic trace writes each Ref as the
// run's number for it, in the order it first shows them, the same ref
// alike each time; text that only looks like a ref's start is left as it
// is.
func TestTraceRenumbersRefs(t *testing.T) {
	d := &detState{}
	for _, c := range []struct{ in, want string }{
		{"no refs", "no refs"},
		{"{#Ref<7041> x}", "{#Ref<0.1> x}"},
		{"#Ref<33> then #Ref<7041>", "#Ref<0.2> then #Ref<0.1>"},
		{"#Ref<> #Ref<x> #Ref<12 #Ref<99", "#Ref<> #Ref<x> #Ref<12 #Ref<99"},
		{"#Ref<5>#Ref<33>", "#Ref<0.3>#Ref<0.2>"},
	} {
		if got := d.renumberRefs(c.in); got != c.want {
			t.Errorf("renumberRefs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
