package engine

import (
	"context"
	"fmt"

	"wtd/engine/store"
)

// ChangeMark is the id of the last change the run recorded (0: none): the
// changes recorded after it have larger ids. KeepChangesSince takes it.
func (r *Run) ChangeMark(ctx context.Context) (int64, error) {
	changes, err := r.cfg.Store.Changes(ctx, r.ID)
	if err != nil {
		return 0, err
	}
	if len(changes) == 0 {
		return 0, nil
	}
	return changes[len(changes)-1].ID, nil
}

// KeepChangesSince marks the changes of s recorded after mark and not yet
// put back as kept, with why as their detail (wtd show says it): the
// run's restore, or the next command's after a kill, leaves them on the
// server. It returns how many it marked. A change of the same knob made
// before mark is still put back, to the value it had before the run.
func (s *Server) KeepChangesSince(ctx context.Context, mark int64, why string) (int, error) {
	st := s.run.cfg.Store
	changes, err := st.Changes(ctx, s.run.ID)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for _, c := range changes {
		if c.ID > mark && c.Server == s.Name && c.State == store.ChangePending {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if err := st.SetChangeState(ctx, ids, store.ChangeKept, why); err != nil {
		return 0, fmt.Errorf("keep the changes of %s: %w", s.Name, err)
	}
	return len(ids), nil
}
