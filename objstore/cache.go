package objstore

import (
	"container/list"
	"context"
	"fmt"
	"io"
	"sync"

	"golang.org/x/sync/singleflight"
)

// Cache keeps the objects of a store that are read again and again (the
// assets a worker's calls name) in memory, up to MaxBytes together, the
// least recently read going first. It is for objects that never change
// under their key: an asset's key is its id, and a new image is a new
// asset.
type Cache struct {
	store    Store
	maxBytes int64
	maxItem  int64
	flight   singleflight.Group

	mu    sync.Mutex
	bytes int64
	order *list.List // of *cached, most recently read first
	byKey map[string]*list.Element
}

type cached struct {
	key  string
	data []byte
}

// NewCache returns a Cache on store holding up to maxBytes; an object
// larger than maxItem (maxBytes when 0) is read each time, never kept.
func NewCache(store Store, maxBytes, maxItem int64) *Cache {
	if maxItem <= 0 || maxItem > maxBytes {
		maxItem = maxBytes
	}
	return &Cache{store: store, maxBytes: maxBytes, maxItem: maxItem, order: list.New(), byKey: map[string]*list.Element{}}
}

// Get returns key's bytes, from memory when it holds them, else from the
// store (one read for callers that ask at once). A missing key wraps
// fs.ErrNotExist. The bytes are shared: the caller must not change them.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	if data, ok := c.lookup(key); ok {
		return data, nil
	}
	v, err, _ := c.flight.Do(key, func() (any, error) {
		if data, ok := c.lookup(key); ok {
			return data, nil
		}
		data, err := c.read(ctx, key)
		if err != nil {
			return nil, err
		}
		c.add(key, data)
		return data, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

func (c *Cache) read(ctx context.Context, key string) ([]byte, error) {
	f, err := c.store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, f.Size())
	if _, err := io.ReadFull(readerCtx{ctx, f}, data); err != nil {
		return nil, fmt.Errorf("object store: read %s: %w", key, err)
	}
	return data, nil
}

func (c *Cache) lookup(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cached).data, true
}

func (c *Cache) add(key string, data []byte) {
	size := int64(len(data))
	if size > c.maxItem {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; ok {
		return
	}
	for c.bytes+size > c.maxBytes {
		last := c.order.Back()
		old := c.order.Remove(last).(*cached)
		delete(c.byKey, old.key)
		c.bytes -= int64(len(old.data))
	}
	c.byKey[key] = c.order.PushFront(&cached{key, data})
	c.bytes += size
}

// Bytes is what the cache holds now.
func (c *Cache) Bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}
