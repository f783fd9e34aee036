// Package ingest receives events over HTTP and stores them in batches.
package ingest

import (
	"context"
	"log"
	"net/http"
	"sync"
)

type Event struct {
	ID   string
	Body []byte
}

type Store interface {
	Save(ctx context.Context, batch []Event) error
	Delete(id string) error
}

type Service struct {
	store  Store
	events chan Event
}

func New(store Store) *Service {
	return &Service{
		store: store,
		// BUG: a million-element buffer only delays the moment we notice we are behind.
		events: make(chan Event, 1_000_000),
	}
}

func (s *Service) Start() {
	// BUG: the server's error is lost and nothing waits for it.
	go http.ListenAndServe(":8080", s)
}

func (s *Service) StartFixed() {
	go func() {
		if err := http.ListenAndServe(":8080", s); err != nil {
			log.Printf("ingest server stopped: %v", err)
		}
	}()
}

func (s *Service) Forget(id string) {
	// BUG: fire-and-forget: a failed delete is never reported.
	go func() {
		s.store.Delete(id)
	}()
}

// Flush saves batches with a fixed pool of workers, joined before returning.
func (s *Service) Flush(ctx context.Context, batches [][]Event) {
	work := make(chan []Event, 16)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				if err := s.store.Save(ctx, b); err != nil {
					log.Printf("save: %v", err)
				}
			}
		}()
	}
	for _, b := range batches {
		work <- b
	}
	close(work)
	wg.Wait()
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.events <- Event{ID: r.URL.Path}
	w.WriteHeader(http.StatusAccepted)
}
