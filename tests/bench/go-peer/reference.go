// Chains and assets, kept in memory and reloaded every second (they change rarely and every
// history record names them), with the networks answer rendered once per load.
package main

import (
	"database/sql"
	"strconv"
	"strings"
)

type chain struct {
	id                                uint64
	slug, network, chainID, baseChain string
}

type asset struct {
	id                               uint64
	address, name, symbol, assetType string
	decimals                         int
}

// One load of the reference data; never changed once published (server.ref swaps the pointer).
type reference struct {
	chainByID    map[uint64]*chain
	chainBySlug  map[string]*chain
	assetByID    map[uint64]*asset
	networksBody []byte
	slugList     string
}

type networkJSON struct {
	Network   string `json:"network"`
	ChainID   string `json:"chain_id"`
	BaseChain string `json:"base_chain"`
	Slug      string `json:"slug"`
}

func loadReference(db *sql.DB) (*reference, error) {
	ref := &reference{chainByID: map[uint64]*chain{}, chainBySlug: map[string]*chain{},
		assetByID: map[uint64]*asset{}}
	rows, err := db.Query("SELECT id, slug, network, chain_id, base_chain FROM chains ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	networks := []networkJSON{}
	slugs := []string{}
	for rows.Next() {
		c := &chain{}
		var chainID uint64
		if err := rows.Scan(&c.id, &c.slug, &c.network, &chainID, &c.baseChain); err != nil {
			return nil, err
		}
		c.chainID = strconv.FormatUint(chainID, 10)
		ref.chainByID[c.id], ref.chainBySlug[c.slug] = c, c
		networks = append(networks, networkJSON{c.network, c.chainID, c.baseChain, c.slug})
		slugs = append(slugs, c.slug)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	assets, err := db.Query("SELECT id, address, name, symbol, decimals, asset_type FROM assets ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer assets.Close()
	for assets.Next() {
		a := &asset{}
		if err := assets.Scan(&a.id, &a.address, &a.name, &a.symbol, &a.decimals, &a.assetType); err != nil {
			return nil, err
		}
		ref.assetByID[a.id] = a
	}
	if err := assets.Err(); err != nil {
		return nil, err
	}
	if ref.networksBody, err = marshal(struct {
		Networks []networkJSON `json:"networks"`
	}{networks}); err != nil {
		return nil, err
	}
	ref.slugList = strings.Join(slugs, ", ")
	return ref, nil
}

// The reference data that covers these rows: the current one, or a new load when a row names
// a chain or asset loaded after the last reload.
func (s *server) covering(ref *reference, rows []historyRow) (*reference, error) {
	covered := func(ref *reference) bool {
		for i := range rows {
			r := &rows[i]
			if ref.chainByID[r.sourceChain] == nil || ref.chainByID[r.destinationChain] == nil ||
				ref.assetByID[r.sourceAssetID] == nil || ref.assetByID[r.destinationAssetID] == nil {
				return false
			}
		}
		return true
	}
	if covered(ref) {
		return ref, nil
	}
	ref, err := loadReference(s.db)
	if err != nil {
		return nil, dbError{err}
	}
	s.ref.Store(ref)
	if !covered(ref) {
		return nil, errNoSuch
	}
	return ref, nil
}
