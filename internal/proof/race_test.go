//go:build race

package proof

// raceEnabled: the race detector slows everything several times over, so
// the heaviest variants (100 MiB bodies, 100,000 calls) run smaller.
const raceEnabled = true
