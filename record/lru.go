package record

// lru remembers values by key, the most recently put first, within a bound
// on their number and on the sum of their sizes. The JSONL writer and the
// reader of its files keep one each, with the same bounds, and put a
// trace's record in the same order (the order of the lines): so a reader
// remembers every record the writer still could name in an args_prefix.
type lru[V any] struct {
	maxLen, maxBytes int
	bytes            int
	m                map[string]*lruNode[V]
	root             lruNode[V] // root.next is the newest, root.prev the oldest
}

type lruNode[V any] struct {
	key        string
	val        V
	size       int
	prev, next *lruNode[V]
}

func newLRU[V any](maxLen, maxBytes int) *lru[V] {
	l := &lru[V]{maxLen: maxLen, maxBytes: maxBytes, m: make(map[string]*lruNode[V])}
	l.root.next, l.root.prev = &l.root, &l.root
	return l
}

// get returns the value of key without making it any newer.
func (l *lru[V]) get(key string) (V, bool) {
	if n, ok := l.m[key]; ok {
		return n.val, true
	}
	var zero V
	return zero, false
}

// put makes val the newest value, of key, and forgets the oldest values
// past the bounds: val itself when it alone is larger than maxBytes.
func (l *lru[V]) put(key string, val V, size int) {
	n, ok := l.m[key]
	if ok {
		l.bytes -= n.size
		n.prev.next, n.next.prev = n.next, n.prev
	} else {
		n = &lruNode[V]{key: key}
		l.m[key] = n
	}
	n.val, n.size = val, size
	l.bytes += size
	n.prev, n.next = &l.root, l.root.next
	l.root.next.prev = n
	l.root.next = n
	for len(l.m) > 0 && (len(l.m) > l.maxLen || l.bytes > l.maxBytes) {
		l.remove(l.root.prev)
	}
}

// forget drops key.
func (l *lru[V]) forget(key string) {
	if n, ok := l.m[key]; ok {
		l.remove(n)
	}
}

func (l *lru[V]) remove(n *lruNode[V]) {
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
	l.bytes -= n.size
	delete(l.m, n.key)
}
