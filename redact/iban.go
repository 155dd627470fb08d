package redact

// IBANs: a country code, two check digits and the country's account
// number (BBAN), written together or in groups of four, whose checksum
// (ISO 13616: mod 97) holds.

// ibanLengths is the length of each country's IBANs (SWIFT's IBAN
// registry).
var ibanLengths = map[[2]byte]int{
	{'A', 'D'}: 24, {'A', 'E'}: 23, {'A', 'L'}: 28, {'A', 'T'}: 20, {'A', 'Z'}: 28, {'B', 'A'}: 20,
	{'B', 'E'}: 16, {'B', 'G'}: 22, {'B', 'H'}: 22, {'B', 'I'}: 27, {'B', 'R'}: 29, {'B', 'Y'}: 28,
	{'C', 'H'}: 21, {'C', 'R'}: 22, {'C', 'Y'}: 28, {'C', 'Z'}: 24, {'D', 'E'}: 22, {'D', 'J'}: 27,
	{'D', 'K'}: 18, {'D', 'O'}: 28, {'E', 'E'}: 20, {'E', 'G'}: 29, {'E', 'S'}: 24, {'F', 'I'}: 18,
	{'F', 'K'}: 18, {'F', 'O'}: 18, {'F', 'R'}: 27, {'G', 'B'}: 22, {'G', 'E'}: 22, {'G', 'I'}: 23,
	{'G', 'L'}: 18, {'G', 'R'}: 27, {'G', 'T'}: 28, {'H', 'N'}: 28, {'H', 'R'}: 21, {'H', 'U'}: 28,
	{'I', 'E'}: 22, {'I', 'L'}: 23, {'I', 'Q'}: 23, {'I', 'S'}: 26, {'I', 'T'}: 27, {'J', 'O'}: 30,
	{'K', 'W'}: 30, {'K', 'Z'}: 20, {'L', 'B'}: 28, {'L', 'C'}: 32, {'L', 'I'}: 21, {'L', 'T'}: 20,
	{'L', 'U'}: 20, {'L', 'V'}: 21, {'L', 'Y'}: 25, {'M', 'C'}: 27, {'M', 'D'}: 24, {'M', 'E'}: 22,
	{'M', 'K'}: 19, {'M', 'N'}: 20, {'M', 'R'}: 27, {'M', 'T'}: 31, {'M', 'U'}: 30, {'N', 'I'}: 28,
	{'N', 'L'}: 18, {'N', 'O'}: 15, {'O', 'M'}: 23, {'P', 'K'}: 24, {'P', 'L'}: 28, {'P', 'S'}: 29,
	{'P', 'T'}: 25, {'Q', 'A'}: 29, {'R', 'O'}: 24, {'R', 'S'}: 22, {'R', 'U'}: 33, {'S', 'A'}: 24,
	{'S', 'C'}: 31, {'S', 'D'}: 18, {'S', 'E'}: 24, {'S', 'I'}: 19, {'S', 'K'}: 24, {'S', 'M'}: 27,
	{'S', 'O'}: 23, {'S', 'T'}: 25, {'S', 'V'}: 28, {'T', 'L'}: 23, {'T', 'N'}: 24, {'T', 'R'}: 26,
	{'U', 'A'}: 29, {'V', 'A'}: 22, {'V', 'G'}: 24, {'X', 'K'}: 20, {'Y', 'E'}: 30,
}

const maxIBAN = 34

func findIBANs(t []byte, out []Match) []Match {
	for i := 0; i+15 <= len(t); i++ {
		if !isLetter(t[i]) || !isLetter(t[i+1]) || !isDigit(t[i+2]) || !isDigit(t[i+3]) || i > 0 && glued(t[i-1]) {
			continue
		}
		n, ok := ibanLengths[[2]byte{upper(t[i]), upper(t[i+1])}]
		if !ok {
			continue
		}
		if end, ok := ibanAt(t, i, n); ok {
			out = append(out, Match{IBAN, i, end})
			i = end - 1
		}
	}
	return out
}

// ibanAt reads an IBAN of n characters at t[i], written together or in
// groups of four parted by single spaces, and checks it.
func ibanAt(t []byte, i, n int) (end int, ok bool) {
	var buf [maxIBAN]byte
	k, spaced := 0, false
	j := i
	for k < n && j < len(t) {
		c := t[j]
		switch {
		case isAlnum(c):
			buf[k] = upper(c)
			k++
			j++
		case c == ' ' && k%4 == 0 && k > 0 && (spaced || k == 4) && j+1 < len(t) && isAlnum(t[j+1]):
			spaced = true
			j++
		default:
			return 0, false
		}
	}
	if k < n || j < len(t) && isAlnum(t[j]) {
		return 0, false
	}
	return j, ibanChecks(buf[:n])
}

// ibanChecks reports whether the IBAN s (upper case, no spaces) has good
// check digits: moved to the end, letters as 10 to 35, it is 1 modulo 97.
func ibanChecks(s []byte) bool {
	rem := 0
	for k := range s {
		c := s[(k+4)%len(s)]
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		default:
			rem = (rem*100 + int(c-'A'+10)) % 97
		}
	}
	return rem == 1
}
