package mailbox

import "testing"

func TestPeekShowsOldestFirstAndRemovesNothing(t *testing.T) {
	var m Mailbox
	m.Init(0)
	var nc Cache
	for i := 0; i < 5; i++ {
		if err := m.Send(i, &nc); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	m.Peek(3, func(v any) bool { got = append(got, v.(int)); return true })
	if len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Fatalf("Peek(3) saw %v, want [0 1 2]", got)
	}
	got = got[:0]
	m.Peek(10, func(v any) bool { got = append(got, v.(int)); return v.(int) < 1 })
	if len(got) != 2 {
		t.Fatalf("Peek stopping at 1 saw %v, want [0 1]", got)
	}
	for i := 0; i < 5; i++ {
		v, ok := m.Pop(&nc)
		if !ok || v.(int) != i {
			t.Fatalf("Pop %d = %v, %v after Peek", i, v, ok)
		}
	}
	n := 0
	m.Peek(10, func(any) bool { n++; return true })
	if n != 0 {
		t.Fatalf("Peek of an empty lane saw %d messages", n)
	}
}
