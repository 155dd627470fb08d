package pgtest_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/llmhistory/llmhistory/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A shared server gives each test a database of its own, and a server of
// one's own stops and starts again on its port.
func TestServer(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Shared(t).NewDatabase(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	var v string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&v); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	if v == "postgres" {
		t.Fatalf("current_database() = %q, want the test's own", v)
	}

	own := pgtest.Start(t, pgtest.Options{})
	if err := own.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := pgx.Connect(ctx, own.URL("postgres")); err == nil {
		t.Fatal("connected to a stopped server")
	}
	if err := own.Start(); err != nil {
		t.Fatal(err)
	}
	c2, err := pgx.Connect(ctx, own.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	c2.Close(ctx)
}

// A test process that ends without stopping its server (killed by
// -timeout, crashed) takes the server with it: a leftover server would
// hold its port, its memory and its files until the machine restarts.
func TestServerEndsWithItsProcess(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") == "1" {
		s := pgtest.Shared(t)
		fmt.Println("port", s.Port, s.Dir)
		os.Exit(0) // no Main, no cleanups
	}
	if testing.Short() {
		t.Skip("starts a server in a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestServerEndsWithItsProcess$")
	cmd.Env = append(os.Environ(), "PGTEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var port int
	var dir string
	for _, line := range strings.Split(string(out), "\n") {
		if _, err := fmt.Sscanf(line, "port %d %s", &port, &dir); err == nil {
			break
		}
	}
	if dir != "" {
		// The cluster the child left, if the test fails before the
		// sweep below removes it.
		defer func() {
			os.RemoveAll(dir)
			os.Remove(dir + ".log")
			os.Remove(dir + ".owner")
		}()
	}
	if port == 0 {
		if strings.Contains(string(out), "SKIP") {
			t.Skipf("no server in the child:\n%s", out)
		}
		t.Fatalf("the child said no port:\n%s", out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			break // stopped
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the server on port %d outlived its test process by 30 s", port)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Its cluster stays behind (183 MB): the next server started on the
	// machine removes it, and keeps this process's own.
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the child's cluster %s: %v", dir, err)
	}
	shared := pgtest.Shared(t)
	mine := pgtest.Start(t, pgtest.Options{})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the cluster of the ended child is still there after a start (%v)", err)
	}
	if _, err := os.Stat(dir + ".owner"); !os.IsNotExist(err) {
		t.Errorf("its owner's mark is still there (%v)", err)
	}
	if _, err := os.Stat(mine.Dir); err != nil {
		t.Errorf("the new server's own cluster: %v", err)
	}
	if _, err := os.Stat(shared.Dir); err != nil {
		t.Errorf("this process's shared cluster, made before the start: %v", err)
	}
}
