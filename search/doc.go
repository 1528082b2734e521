// Package search is imprint's hybrid recall: keyword (FTS5 BM25) and vector
// (cosine) results over the store's Searcher, fused by reciprocal rank
// fusion, always within one scope.
package search
