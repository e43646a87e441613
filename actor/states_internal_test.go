package actor

import (
	"testing"

	"github.com/colonyrt/colony/slot"
)

// TestStateConstantsMatchTheSlotWord: ActorInfo.State is the slot state's
// name; the exported constants must be those names.
func TestStateConstantsMatchTheSlotWord(t *testing.T) {
	for st, want := range map[slot.State]string{
		slot.Queued: StateQueued, slot.Running: StateRunning, slot.Notified: StateNotified,
		slot.Parked: StateParked, slot.Blocked: StateBlocked,
	} {
		if got := st.String(); got != want {
			t.Errorf("slot state %d prints %q, the constant is %q", st, got, want)
		}
	}
}
