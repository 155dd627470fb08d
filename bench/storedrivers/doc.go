// Package storedrivers measures the two pure-Go SQLite drivers the store
// could use, modernc.org/sqlite (store/sqlite's) and
// github.com/ncruces/go-sqlite3, on the store's own work: the same SQL,
// the same records. It lives in the bench module so that the driver not
// chosen stays out of the library's dependencies. docs/store.md has the
// figures; from this directory:
//
//	LLMHISTORY_BENCH_RECORDS=200000 go test -run '^$' -bench . -benchtime 20000x -count 5 > drivers.txt
//	benchstat -col /driver drivers.txt
//	go test -run TestBinarySize -v
package storedrivers
