// Package pgtest runs throwaway PostgreSQL servers for tests: Debian's
// postgres binaries (/usr/lib/postgresql/*/bin, the postgresql package),
// a cluster made by initdb in a temporary directory, owned by an
// unprivileged user when the tests run as root (postgres refuses root),
// listening on a free loopback port, removed when done. A server ends
// with the test process that started it, and the next start removes the
// clusters such processes left.
//
// Without the binaries a test is skipped, unless LLMHISTORY_REQUIRE_POSTGRES
// is 1 (as CI sets it): then it fails, so that a store test cannot pass
// by not running.
package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options configures [Start].
type Options struct {
	// Durable keeps PostgreSQL's default durability (fsync on); by
	// default a test server skips fsync, which it does not need.
	Durable bool
}

// Server is a running throwaway cluster.
type Server struct {
	Dir  string // the data directory (and the socket's)
	Port int
	bin  string
	cred *syscall.Credential // whom postgres runs as; nil: this user
	opts Options

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan error // gets the process's end
	dbs    atomic.Int64
}

// Required reports whether a missing PostgreSQL fails tests rather than
// skips them.
func Required() bool { return os.Getenv("LLMHISTORY_REQUIRE_POSTGRES") == "1" }

// binDir finds the newest /usr/lib/postgresql/N/bin with initdb.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (apt-get install postgresql)")
}

// Start makes and starts a cluster; tb's cleanup stops it and removes it.
func Start(tb testing.TB, o Options) *Server {
	tb.Helper()
	s, err := start(o)
	if err != nil {
		if Required() {
			tb.Fatalf("pgtest: %v (LLMHISTORY_REQUIRE_POSTGRES=1)", err)
		}
		tb.Skipf("pgtest: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Shared returns one server for the whole test binary, started at the
// first call; [Main] stops it. Each test takes a database of its own
// ([Server.NewDatabase]).
func Shared(tb testing.TB) *Server {
	tb.Helper()
	sharedOnce.Do(func() { shared, sharedErr = start(Options{}) })
	if sharedErr != nil {
		if Required() {
			tb.Fatalf("pgtest: %v (LLMHISTORY_REQUIRE_POSTGRES=1)", sharedErr)
		}
		tb.Skipf("pgtest: %v", sharedErr)
	}
	return shared
}

// Main runs the tests and stops the shared server: call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	os.Exit(code)
}

func start(o Options) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	sweep()
	dir, err := os.MkdirTemp("", "llmhistory-pg-")
	if err != nil {
		return nil, err
	}
	// Who made it, for sweep: beside the cluster, which initdb wants
	// empty.
	if err := os.WriteFile(dir+".owner", []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin, opts: o}
	if os.Geteuid() == 0 {
		// postgres will not run as root: hand the directory to nobody.
		u, err := user.Lookup("nobody")
		if err != nil {
			s.remove()
			return nil, fmt.Errorf("running as root, and no user nobody to run postgres as: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			s.remove()
			return nil, err
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		s.remove()
		return nil, err
	}
	initdb := s.command(filepath.Join(bin, "initdb"), "-D", dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	if out, err := initdb.CombinedOutput(); err != nil {
		s.remove()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if s.Port, err = freePort(); err != nil {
		s.remove()
		return nil, err
	}
	if err := s.Start(); err != nil {
		s.remove()
		return nil, err
	}
	return s, nil
}

// sweep removes the clusters (183 MB each) of test processes that ended
// without their cleanups: killed by go test's -timeout, or fuzzing's
// workers, which the fuzzer kills. Their servers ended with them
// (Pdeathsig); their files stay until someone removes them. A cluster is
// left alone while the process that made it lives, and one made before
// owners were written down while a postmaster runs in it or for an hour
// after it changed.
func sweep() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "llmhistory-pg-*"))
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if b, err := os.ReadFile(dir + ".owner"); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && alive(pid) {
				continue
			}
		} else if time.Since(fi.ModTime()) < time.Hour || postmasterRuns(dir) {
			continue
		}
		(&Server{Dir: dir}).remove()
	}
}

// alive reports whether process pid exists (a signal 0 finds it; EPERM
// says it exists under another user).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// postmasterRuns reports whether the postmaster.pid of a cluster names a
// live process.
func postmasterRuns(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	return err == nil && alive(pid)
}

// remove removes the cluster, its log and its owner's mark.
func (s *Server) remove() {
	os.RemoveAll(s.Dir)
	os.Remove(filepath.Join(os.TempDir(), filepath.Base(s.Dir)+".log"))
	os.Remove(s.Dir + ".owner")
}

func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	cmd.Dir = s.Dir
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
		cmd.Dir = "/"
	}
	return cmd
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start starts the server (again, after Stop) and waits until it takes
// connections.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	args := []string{"-D", s.Dir, "-p", strconv.Itoa(s.Port), "-k", s.Dir, "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"}
	if !s.opts.Durable {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	cmd := s.command(filepath.Join(s.bin, "postgres"), args...)
	// A test binary that dies without its cleanups (killed by -timeout,
	// a crash, a package without Main) takes its server with it: fast
	// shutdown when this process ends. Go sets it after the credentials
	// (a change of user would clear it), and never exits the threads
	// that start processes.
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
	logf, err := os.OpenFile(filepath.Join(os.TempDir(), filepath.Base(s.Dir)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	logf.Close()
	s.cmd = cmd
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			s.exited = exited
			return nil
		}
		select {
		case werr := <-exited:
			s.cmd = nil
			return fmt.Errorf("postgres exited: %v\n%s", werr, s.logTail())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("postgres did not start in a minute: %v\n%s", err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(os.TempDir(), filepath.Base(s.Dir)+".log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Stop shuts the server down (fast: open transactions are rolled back)
// and waits for it; the cluster stays, for Start.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
	return nil
}

// Close stops the server and removes its cluster.
func (s *Server) Close() {
	s.Stop()
	s.remove()
}

// URL is the URL of database db on the server, as user postgres.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// NewDatabase creates a database of its own for a test and returns its
// URL; the test's cleanup drops it.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("t%d_%s", s.dbs.Add(1), strings.ToLower(sanitize(tb.Name())))
	if len(name) > 60 {
		name = name[:60]
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err != nil {
			return // stopped by the test
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return s.URL(name)
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
