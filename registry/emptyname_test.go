package registry

import (
	"errors"
	"testing"
)

// TestEmptyName: "" is refused alike by Register and Unregister, with
// ErrEmptyName (Unregister said ErrNotRegistered, as if "" could be a
// name someone might hold).
func TestEmptyName(t *testing.T) {
	r := New[int]()
	if err := r.Register("", 1); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("Register(\"\"): %v, want ErrEmptyName", err)
	}
	if err := r.Unregister(""); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("Unregister(\"\"): %v, want ErrEmptyName", err)
	}
}
