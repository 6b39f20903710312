module github.com/rlsearch/rlsearch

go 1.26.8
