// Package vector holds the float32 vector codec used to store embeddings as
// BLOBs and a top-k cosine scan over an in-memory matrix, parallel over the
// machine's cores, with filters applied before scoring. Large matrices are
// scanned first through an int8 copy of their rows and the best candidates
// re-ranked exactly in float32.
package vector
