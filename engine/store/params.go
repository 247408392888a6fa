package store

import (
	"context"
	"fmt"
)

// setParamsOp replaces a run's parameters.
type setParamsOp struct {
	id     int64
	params map[string]any
}

func (o *setParamsOp) describe() string { return fmt.Sprintf("set parameters of run %d", o.id) }

func (o *setParamsOp) apply(ctx context.Context, w *writer) error {
	params, err := marshalRedacted(o.params)
	if err != nil {
		return fmt.Errorf("encode params: %w", err)
	}
	return w.execOne(ctx, `UPDATE runs SET params = ? WHERE id = ?`, params, o.id)
}

// SetRunParams records a run's final parameters, which a playbook declares
// after the run has started.
func (s *Store) SetRunParams(ctx context.Context, id int64, params map[string]any) error {
	return s.do(ctx, &setParamsOp{id: id, params: params})
}
