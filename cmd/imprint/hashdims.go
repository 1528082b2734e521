package main

// hashDimensions is the dimension of the local hash embedder.
const hashDimensions = 384
