package term

import (
	"bytes"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	for _, tc := range []struct {
		done, total int64
		took        time.Duration
		want        string
	}{
		{6, 12, 3 * time.Second, "experiment [============            ] 6/12 trials  2 trials/s  3s left"},
		{12, 12, 3 * time.Second, "experiment [========================] 12/12 trials  4 trials/s"},
		{1500, -1, time.Second, "experiment: 1,500 done  1,500 trials/s"},
	} {
		if got := Progress("experiment", "trials", tc.done, tc.total, tc.took); got != tc.want {
			t.Errorf("Progress(%d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}

// Off a terminal the line shows nothing; on one it draws in place and
// clears before what else is written.
func TestStatusLine(t *testing.T) {
	var pipe bytes.Buffer
	if off := NewStatusLine(&pipe); off.Due(true) {
		t.Fatal("a buffer is no terminal")
	}
	var tty bytes.Buffer
	s := NewLiveStatusLine(&tty)
	if !s.Due(true) {
		t.Fatal("a live line is due when forced")
	}
	s.Show("working")
	s.Write([]byte("done\n"))
	if got, want := tty.String(), "\rworking\x1b[K\r\x1b[Kdone\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
