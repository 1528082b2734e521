// Package vector holds the float32 vector codec used to store embeddings as
// BLOBs and an exact top-k cosine scan over an in-memory matrix, parallel
// over the machine's cores, with filters applied before scoring.
package vector
