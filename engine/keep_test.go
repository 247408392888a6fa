package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"wtd/engine/record"
	"wtd/engine/store"
)

// TestKeepChangesSinceLeavesThemAtTheEnd: of the changes a run made on a
// server it did not start, those recorded after the mark and kept stay on
// the server at the run's end, with their detail; one made before the mark
// is put back.
func TestKeepChangesSinceLeavesThemAtTheEnd(t *testing.T) {
	ctx := context.Background()
	client, uri := startTestServer(t)
	r, st, _ := startTestRun(t, Config{})
	s, err := r.ConnectServer(ctx, uri, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	param := func(name string) string {
		var got bson.M
		raw, err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "getParameter", Value: 1}, {Key: name, Value: 1}}).Raw()
		if err != nil {
			t.Fatal(err)
		}
		bson.Unmarshal(raw, &got)
		return fmt.Sprint(got[name])
	}
	ttl, sync := param("ttlMonitorSleepSecs"), param("syncdelay")
	if _, err := s.SetParameter(ctx, "ttlMonitorSleepSecs", int32(7)); err != nil {
		t.Fatal(err)
	}
	mark, err := r.ChangeMark(ctx)
	if err != nil || mark == 0 {
		t.Fatalf("mark %d (%v) after one change", mark, err)
	}
	for _, v := range []float64{15, 25} {
		if _, err := s.SetParameter(ctx, "syncdelay", v); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.KeepChangesSince(ctx, mark, "kept by a test"); err != nil || n != 2 {
		t.Fatalf("kept %d changes (%v), want the 2 after the mark", n, err)
	}
	if err := r.Finish(ctx, record.StatusOK, ""); err != nil {
		t.Fatal(err)
	}
	if got := param("syncdelay"); got != "25" || got == sync {
		t.Errorf("syncdelay after the run = %s (it was %s), want the kept 25", got, sync)
	}
	if got := param("ttlMonitorSleepSecs"); got != ttl {
		t.Errorf("ttlMonitorSleepSecs after the run = %s, want %s put back", got, ttl)
	}
	changes, err := st.Changes(ctx, r.ID)
	if err != nil || len(changes) != 3 {
		t.Fatalf("changes %+v (%v)", changes, err)
	}
	for i, want := range []string{store.ChangeRestored, store.ChangeKept, store.ChangeKept} {
		if c := changes[i]; c.State != want || (want == store.ChangeKept && c.Detail != "kept by a test") {
			t.Errorf("change %d (%s): %s %q, want %s", i, c.Target, c.State, c.Detail, want)
		}
	}
}
