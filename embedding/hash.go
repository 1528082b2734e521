package embedding

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// The hashing scheme. Every constant in this block decides which component a
// feature lands in or how much it weighs, so changing any of them (or the
// tokenization in this file, or the stop word list) changes every vector:
// changing this requires re-embedding, and must come with a new HashName.
const (
	// HashDimensions is the length of every Hash vector.
	HashDimensions = 384
	// HashName is Hash's Name: the scheme and its dimension.
	HashName = "hash/384"

	// Features are hashed with 64-bit FNV-1a, then mixed with the MurmurHash3
	// finalizer so low bits avalanche. The component is the low 32 bits
	// modulo HashDimensions; bit 63 gives the sign, so unrelated features
	// colliding in a component tend to cancel instead of piling up.
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211

	// Feature weights (before L2 normalization). Character n-grams make
	// word forms meet ("test", "tests", "testing"); they were set so real
	// questions find their evidence turns in LoCoMo conversations
	// (recall@10 0.45; see TestHashRecallOnLoCoMo).
	wordWeight     = 1.0 // a lowercased word
	stopWordWeight = 0.2 // an English function word ("the", "of", ...)
	bigramWeight   = 0.4 // two consecutive words, unless both are stop words
	charGramWeight = 0.6 // a character n-gram of a word with boundary markers
	charGramSize   = 3   // n of the character n-grams
	cjkCharWeight  = 0.5 // one Han, Kana or Hangul character
	cjkPairWeight  = 1.0 // two consecutive Han, Kana or Hangul characters

	// Feature kinds prefix every hashed feature so equal strings of
	// different kinds land in unrelated components.
	kindWord     = 'w'
	kindBigram   = 'b'
	kindCharGram = 'c'
	kindCJKChar  = 'u'
	kindCJKPair  = 'k'
)

// stopWords are weighted down and get no character n-grams: they carry
// little meaning but appear in nearly every English sentence.
var stopWords = map[string]bool{}

func init() {
	for _, w := range []string{
		"a", "an", "the", "and", "or", "but", "if", "of", "to", "in", "on", "at", "by",
		"for", "with", "from", "as", "is", "are", "was", "were", "be", "been", "am",
		"it", "its", "this", "that", "these", "those", "i", "you", "he", "she", "we",
		"they", "me", "my", "your", "our", "their", "his", "her", "do", "does", "did",
		"have", "has", "had", "not", "no", "so", "s", "t", "will", "would", "can",
		"could", "there", "what", "which", "who", "about", "into", "than", "then",
	} {
		stopWords[w] = true
	}
}

// Hash is the default local embedder: deterministic signed feature hashing
// of words, word bigrams, character trigrams and CJK characters and
// character pairs into HashDimensions components. It needs no model and no
// network; its vectors capture shared vocabulary, not meaning. A Hash is
// safe for concurrent use.
type Hash struct{}

// NewHash returns the local hashing embedder.
func NewHash() *Hash { return &Hash{} }

// Name returns HashName.
func (*Hash) Name() string { return HashName }

// Lexical reports true: a Hash vector is the text's vocabulary, not its
// meaning (imprint.LexicalEmbedder).
func (*Hash) Lexical() bool { return true }

// Dimensions returns HashDimensions.
func (*Hash) Dimensions() int { return HashDimensions }

// Embed returns one unit vector per text, in order. A text without any
// letter, digit or CJK character (e.g. "" or "!!!") has no features and gets
// the zero vector, which scores 0 against every vector. Embed fails only
// when ctx is done.
func (h *Hash) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var f featurizer
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("hash embed: %w", err)
			}
		}
		out[i] = f.vector(t)
	}
	return out, nil
}

// featurizer holds the scratch buffers of one embedding at a time.
type featurizer struct {
	acc      [HashDimensions]float64
	word     []byte // current word, lowercased UTF-8
	prev     []byte // previous word, for bigrams; nil at a chain break
	prevStop bool
	offs     []int // rune start offsets of word
	// wordASCII is set while word has only ASCII bytes: its runes are
	// its bytes.
	wordASCII bool
}

func (f *featurizer) vector(text string) []float32 {
	f.acc = [HashDimensions]float64{}
	f.word, f.prev = f.word[:0], f.prev[:0]
	hasPrev := false
	f.wordASCII = true
	var prevCJK rune
	for i := 0; i < len(text); {
		// ASCII first: it is most of most texts, and none of it is CJK,
		// a mark or a letter whose lower case is not ASCII.
		if c := text[i]; c < utf8.RuneSelf {
			i++
			prevCJK = 0
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				f.word = append(f.word, c)
			case 'A' <= c && c <= 'Z':
				f.word = append(f.word, c+'a'-'A')
			default:
				f.flushWord(&hasPrev)
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		switch {
		case isCJK(r):
			f.flushWord(&hasPrev)
			hasPrev = false // CJK breaks word bigram chains
			f.add(hashRunes(kindCJKChar, r, 0), cjkCharWeight)
			if prevCJK != 0 {
				f.add(hashRunes(kindCJKPair, prevCJK, r), cjkPairWeight)
			}
			prevCJK = r
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			prevCJK = 0
			f.word = utf8.AppendRune(f.word, unicode.ToLower(r))
			f.wordASCII = false
		default:
			prevCJK = 0
			f.flushWord(&hasPrev)
		}
	}
	f.flushWord(&hasPrev)

	var sum float64
	for _, x := range f.acc {
		sum += float64(x * x) // the conversion forbids FMA, keeping results equal across CPUs
	}
	v := make([]float32, HashDimensions)
	if sum == 0 {
		return v
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range f.acc {
		v[i] = float32(x * inv)
	}
	return v
}

// flushWord emits the features of the word in f.word and starts a new one.
func (f *featurizer) flushWord(hasPrev *bool) {
	if len(f.word) == 0 {
		return
	}
	stop := stopWords[string(f.word)]
	if stop {
		f.add(hashBytes(kindWord, f.word, nil), stopWordWeight)
	} else {
		f.add(hashBytes(kindWord, f.word, nil), wordWeight)
		f.charGrams()
	}
	if *hasPrev && !(stop && f.prevStop) {
		f.add(hashBytes(kindBigram, f.prev, f.word), bigramWeight)
	}
	f.prev, f.word = f.word, f.prev[:0]
	f.prevStop = stop
	f.wordASCII = true
	*hasPrev = true
}

// charGrams emits the character n-grams of "<word>", where < and > mark the
// word's start and end (they cannot occur inside a word).
func (f *featurizer) charGrams() {
	f.offs = f.offs[:0]
	if f.wordASCII { // each byte is a rune
		for i := range len(f.word) {
			f.offs = append(f.offs, i)
		}
	} else {
		for i := range string(f.word) {
			f.offs = append(f.offs, i)
		}
	}
	nr := len(f.offs)
	f.offs = append(f.offs, len(f.word))
	padded := nr + 2
	if padded < charGramSize {
		return
	}
	for p := 0; p+charGramSize <= padded; p++ {
		h := uint64(fnvOffset64)
		h = fnvByte(h, kindCharGram)
		h = fnvByte(h, 0)
		for j := p; j < p+charGramSize; j++ {
			switch j {
			case 0:
				h = fnvByte(h, '<')
			case padded - 1:
				h = fnvByte(h, '>')
			default:
				for _, c := range f.word[f.offs[j-1]:f.offs[j]] {
					h = fnvByte(h, c)
				}
			}
		}
		f.add(h, charGramWeight)
	}
}

// add adds weight w to the component and sign chosen by feature hash h.
func (f *featurizer) add(h uint64, w float64) {
	h = fmix64(h)
	i := uint32(h) % HashDimensions
	if h>>63 == 1 {
		w = -w
	}
	f.acc[i] += w
}

func fnvByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime64 }

// hashBytes hashes kind, a zero byte, a and, when b is not nil, a space and b.
func hashBytes(kind byte, a, b []byte) uint64 {
	h := fnvByte(fnvByte(fnvOffset64, kind), 0)
	for _, c := range a {
		h = fnvByte(h, c)
	}
	if b != nil {
		h = fnvByte(h, ' ')
		for _, c := range b {
			h = fnvByte(h, c)
		}
	}
	return h
}

// hashRunes hashes kind, a zero byte and the UTF-8 of r1 and, if not 0, r2.
func hashRunes(kind byte, r1, r2 rune) uint64 {
	var buf [2 * utf8.UTFMax]byte
	b := utf8.AppendRune(buf[:0], r1)
	if r2 != 0 {
		b = utf8.AppendRune(b, r2)
	}
	return hashBytes(kind, b, nil)
}

// fmix64 is the MurmurHash3 64-bit finalizer.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// isCJK reports whether r is written without spaces between words in the
// scripts the hash treats by character: Han, Hiragana, Katakana, Hangul.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) || r == 0x30fc // ー
}

// hashNameFor documents how HashName is derived; a test keeps them equal.
func hashNameFor(dims int) string { return "hash/" + strconv.Itoa(dims) }
