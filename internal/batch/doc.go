// Package batch is the one gather-until-full-or-timeout loop behind every
// batching owner goroutine (the E5 batcher of server, the GPU
// index of package ann, the reranker's queue): an owner goroutine calls
// Gatherer.Next, runs the batch it returns, and calls Next again.
//
// A batch starts with the first waiting item (or the item carried over from
// the previous batch) and takes more items from the channel until it is
// full (Size of its items reaches Max), Wait has passed since the batch
// opened (or since its first item arrived, with Arrived), or Stop is
// closed. With Wait ≤ 0 only items that are already queued join. An item
// that would overflow the batch, or that must run alone, is carried over to
// start the next batch, so items keep their order. A first item larger
// than Max forms a batch by itself.
package batch
