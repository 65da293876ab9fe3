-- One key summed over every row: json_extract reads text and JSONB alike.
SELECT sum(json_extract(doc, :path)), count(*) FROM {table};
