package store

import "container/list"

// traceEntry is what a store remembers of the newest record it wrote in
// a trace, to store the next one's args as what they add to it.
type traceEntry struct {
	trace   string
	seq     int64    // the record
	depth   int      // records its args reach back through (0: none)
	ids     []int64  // its args' message IDs, whole
	sums    []uint64 // a keyed hash of each element, to compare the next with
	touched int64    // no message of ids has last_used below it
}

// traceCache keeps the entries of the traces written last, bounded by
// count and by the IDs they hold. It is used under Store.wmu only.
type traceCache struct {
	maxTraces, maxIDs int
	ids               int
	order             *list.List // of *traceEntry, most recent first
	byTrace           map[string]*list.Element
}

func newTraceCache(maxTraces, maxIDs int) *traceCache {
	return &traceCache{maxTraces: maxTraces, maxIDs: maxIDs, order: list.New(), byTrace: map[string]*list.Element{}}
}

func (c *traceCache) get(trace string) *traceEntry {
	if el, ok := c.byTrace[trace]; ok {
		return el.Value.(*traceEntry)
	}
	return nil
}

func (c *traceCache) put(e *traceEntry) {
	if el, ok := c.byTrace[e.trace]; ok {
		c.ids -= len(el.Value.(*traceEntry).ids)
		el.Value = e
		c.order.MoveToFront(el)
	} else {
		c.byTrace[e.trace] = c.order.PushFront(e)
	}
	c.ids += len(e.ids)
	for c.order.Len() > 0 && (c.order.Len() > c.maxTraces || c.ids > c.maxIDs) {
		c.drop(c.order.Back())
	}
}

func (c *traceCache) drop(el *list.Element) {
	e := c.order.Remove(el).(*traceEntry)
	delete(c.byTrace, e.trace)
	c.ids -= len(e.ids)
}
