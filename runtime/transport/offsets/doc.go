// Package offsets keeps the books of a log's partition consumed out of
// order, for transports whose broker commits one offset per partition
// (Kafka and the brokers that speak its protocol): a partition's records
// are taken in offset order, finish in any order (their keys run in
// parallel lanes), and the partition may be committed only up to its
// lowest unfinished offset.
//
// A Tracker follows one partition: what was taken and not finished, the
// commit point, and whether the next record still fits in the commit's
// metadata. Encode and Decode write and read that metadata: the finished
// offsets above the committed one, so that the next owner of the partition
// skips them instead of running them again. Both the parallel consumers of
// the JVM world and this package keep such a map; its format is this
// package's own (see Encode).
package offsets
