package redact

import (
	"bytes"
	"net/netip"
)

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return len(b) > 0
}

// IP addresses. Loopback and unspecified addresses (127.0.0.1, ::1,
// 0.0.0.0, ::) and the IPv4 broadcast and netmasks (255.x.x.x) say
// nothing about anyone and are left alone; so is a dotted quad after
// "version", "release", "build", "patch" or "firmware".

var versionWords = []string{"version", "release", "build", "patch", "firmware"}

func parseIP(b []byte) (netip.Addr, bool) {
	a, err := netip.ParseAddr(string(b))
	return a, err == nil
}

// keepIP reports whether a is an address that identifies nobody.
func keepIP(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsUnspecified() || a.Is4() && a.As4()[0] == 255
}

func findIPv4s(t []byte, out []Match) []Match {
	for i := 0; i+7 <= len(t); i++ {
		if !isDigit(t[i]) {
			continue
		}
		if i > 0 && (glued(t[i-1]) || t[i-1] == '.' || t[i-1] == '_') {
			for i+1 < len(t) && (isDigit(t[i+1]) || t[i+1] == '.') {
				i++
			}
			continue
		}
		end, ok := ipv4At(t, i)
		if !ok {
			for i+1 < len(t) && (isDigit(t[i+1]) || t[i+1] == '.') {
				i++
			}
			continue
		}
		if a, ok := parseIP(t[i:end]); ok && !keepIP(a) && !wordBefore(t, i, 16, versionWords) {
			out = append(out, Match{IP, i, end})
		}
		i = end - 1
	}
	return out
}

// ipv4At reads a dotted quad at t[i]: four numbers of 0 to 255 without
// leading zeros, and no fifth.
func ipv4At(t []byte, i int) (end int, ok bool) {
	for part := 0; part < 4; part++ {
		if part > 0 {
			if i >= len(t) || t[i] != '.' {
				return 0, false
			}
			i++
		}
		start, v := i, 0
		for i < len(t) && isDigit(t[i]) && i-start < 4 {
			v = v*10 + int(t[i]-'0')
			i++
		}
		if n := i - start; n == 0 || n > 3 || v > 255 || n > 1 && t[start] == '0' {
			return 0, false
		}
	}
	if i < len(t) && (isAlnum(t[i]) || t[i] == '.' && i+1 < len(t) && isDigit(t[i+1])) {
		return 0, false
	}
	return i, true
}

func findIPv6s(t []byte, out []Match) []Match {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !isHex(c) && c != ':' {
			continue
		}
		if i > 0 && (glued(t[i-1]) || t[i-1] == ':' || t[i-1] == '.' || t[i-1] == '_') {
			continue
		}
		j, colons, digits := i, 0, false
		for j < len(t) && (isHex(t[j]) || t[j] == ':' || t[j] == '.') {
			switch {
			case t[j] == ':':
				colons++
			case isDigit(t[j]):
				digits = true
			}
			j++
		}
		if colons < 2 || !digits || j-i < 3 || j-i > 45 || j < len(t) && (isLetter(t[j]) || t[j] == '_') {
			i = j - 1
			continue
		}
		end := j
		for end > i && t[end-1] == '.' {
			end-- // a full stop after the address
		}
		a, ok := parseIP(t[i:end])
		if !ok && end-i > 2 && t[end-1] == ':' && t[end-2] != ':' {
			end-- // a colon after it: "at 2001:db8::1: ..."
			a, ok = parseIP(t[i:end])
		}
		if !ok {
			// A port after it, without the brackets: 2001:db8::1:54761.
			if c := bytes.LastIndexByte(t[i:end], ':'); c > 0 && end-i-c-1 <= 5 && allDigits(t[i+c+1:end]) {
				if a2, ok2 := parseIP(t[i : i+c]); ok2 {
					a, ok, end = a2, true, i+c
				}
			}
		}
		if ok && a.Is6() && !keepIP(a) {
			out = append(out, Match{IP, i, end})
		}
		i = j - 1
	}
	return out
}
