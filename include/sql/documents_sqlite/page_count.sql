-- Pages and page size of a whole (single-table) database file.
SELECT page_count, page_size FROM pragma_page_count(:schema), pragma_page_size(:schema);
