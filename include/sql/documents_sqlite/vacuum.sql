VACUUM {schema};
