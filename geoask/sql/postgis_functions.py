r"""Names of the ST_* functions and aggregates of PostGIS 3.3 (all compute, none write).

Produced once from the PostGIS 3.3.2 extension installed in PostgreSQL 15 with::

    SELECT DISTINCT lower(p.proname) FROM pg_proc p
    JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
    JOIN pg_extension e ON e.oid = d.refobjid
    WHERE e.extname = 'postgis' AND lower(p.proname) LIKE 'st\_%';

:data:`POSTGIS_RASTER_FUNCTIONS` is the same list for the ``postgis_raster`` extension of
PostGIS 3.3.2 (``e.extname = 'postgis_raster'``), without the functions that touch files or
run SQL text (see :data:`geoask.sql.functions.REFUSED_FUNCTIONS`).

Used by the ``allowed_functions`` rule under the ``postgis`` policy (an allow-list, so a
user-defined ``st_something`` in the database is not callable).
"""

from __future__ import annotations

POSTGIS_ST_FUNCTIONS: frozenset[str] = frozenset(
    (
        "st_3dclosestpoint", "st_3ddfullywithin", "st_3ddistance", "st_3ddwithin", "st_3dextent",
        "st_3dintersects", "st_3dlength", "st_3dlineinterpolatepoint", "st_3dlongestline",
        "st_3dmakebox", "st_3dmaxdistance", "st_3dperimeter", "st_3dshortestline", "st_addmeasure",
        "st_addpoint", "st_affine", "st_angle", "st_area", "st_area2d", "st_asbinary",
        "st_asencodedpolyline", "st_asewkb", "st_asewkt", "st_asflatgeobuf", "st_asgeobuf",
        "st_asgeojson", "st_asgml", "st_ashexewkb", "st_askml", "st_aslatlontext", "st_asmarc21",
        "st_asmvt", "st_asmvtgeom", "st_assvg", "st_astext", "st_astwkb", "st_asx3d", "st_azimuth",
        "st_bdmpolyfromtext", "st_bdpolyfromtext", "st_boundary", "st_boundingdiagonal",
        "st_box2dfromgeohash", "st_buffer", "st_buildarea", "st_centroid", "st_chaikinsmoothing",
        "st_cleangeometry", "st_clipbybox2d", "st_closestpoint", "st_closestpointofapproach",
        "st_clusterdbscan", "st_clusterintersecting", "st_clusterkmeans", "st_clusterwithin",
        "st_collect", "st_collectionextract", "st_collectionhomogenize", "st_combinebbox",
        "st_concavehull", "st_contains", "st_containsproperly", "st_convexhull", "st_coorddim",
        "st_coveredby", "st_covers", "st_cpawithin", "st_crosses", "st_curvetoline",
        "st_delaunaytriangles", "st_dfullywithin", "st_difference", "st_dimension", "st_disjoint",
        "st_distance", "st_distancecpa", "st_distancesphere", "st_distancespheroid", "st_dump",
        "st_dumppoints", "st_dumprings", "st_dumpsegments", "st_dwithin", "st_endpoint",
        "st_envelope", "st_equals", "st_estimatedextent", "st_expand", "st_extent",
        "st_exteriorring", "st_filterbym", "st_findextent", "st_flipcoordinates", "st_force2d",
        "st_force3d", "st_force3dm", "st_force3dz", "st_force4d", "st_forcecollection",
        "st_forcecurve", "st_forcepolygonccw", "st_forcepolygoncw", "st_forcerhr", "st_forcesfs",
        "st_frechetdistance", "st_fromflatgeobuf", "st_fromflatgeobuftotable", "st_generatepoints",
        "st_geogfromtext", "st_geogfromwkb", "st_geographyfromtext", "st_geohash",
        "st_geomcollfromtext", "st_geomcollfromwkb", "st_geometricmedian", "st_geometryfromtext",
        "st_geometryn", "st_geometrytype", "st_geomfromewkb", "st_geomfromewkt",
        "st_geomfromgeohash", "st_geomfromgeojson", "st_geomfromgml", "st_geomfromkml",
        "st_geomfrommarc21", "st_geomfromtext", "st_geomfromtwkb", "st_geomfromwkb", "st_gmltosql",
        "st_hasarc", "st_hausdorffdistance", "st_hexagon", "st_hexagongrid", "st_interiorringn",
        "st_interpolatepoint", "st_intersection", "st_intersects", "st_isclosed", "st_iscollection",
        "st_isempty", "st_ispolygonccw", "st_ispolygoncw", "st_isring", "st_issimple", "st_isvalid",
        "st_isvaliddetail", "st_isvalidreason", "st_isvalidtrajectory", "st_length", "st_length2d",
        "st_length2dspheroid", "st_lengthspheroid", "st_letters", "st_linecrossingdirection",
        "st_linefromencodedpolyline", "st_linefrommultipoint", "st_linefromtext", "st_linefromwkb",
        "st_lineinterpolatepoint", "st_lineinterpolatepoints", "st_linelocatepoint", "st_linemerge",
        "st_linestringfromwkb", "st_linesubstring", "st_linetocurve", "st_locatealong",
        "st_locatebetween", "st_locatebetweenelevations", "st_longestline", "st_m", "st_makebox2d",
        "st_makeenvelope", "st_makeline", "st_makepoint", "st_makepointm", "st_makepolygon",
        "st_makevalid", "st_maxdistance", "st_maximuminscribedcircle", "st_memcollect",
        "st_memsize", "st_memunion", "st_minimumboundingcircle", "st_minimumboundingradius",
        "st_minimumclearance", "st_minimumclearanceline", "st_mlinefromtext", "st_mlinefromwkb",
        "st_mpointfromtext", "st_mpointfromwkb", "st_mpolyfromtext", "st_mpolyfromwkb", "st_multi",
        "st_multilinefromwkb", "st_multilinestringfromtext", "st_multipointfromtext",
        "st_multipointfromwkb", "st_multipolyfromwkb", "st_multipolygonfromtext", "st_ndims",
        "st_node", "st_normalize", "st_npoints", "st_nrings", "st_numgeometries",
        "st_numinteriorring", "st_numinteriorrings", "st_numpatches", "st_numpoints",
        "st_offsetcurve", "st_orderingequals", "st_orientedenvelope", "st_overlaps", "st_patchn",
        "st_perimeter", "st_perimeter2d", "st_point", "st_pointfromgeohash", "st_pointfromtext",
        "st_pointfromwkb", "st_pointinsidecircle", "st_pointm", "st_pointn", "st_pointonsurface",
        "st_points", "st_pointz", "st_pointzm", "st_polyfromtext", "st_polyfromwkb", "st_polygon",
        "st_polygonfromtext", "st_polygonfromwkb", "st_polygonize", "st_project",
        "st_quantizecoordinates", "st_reduceprecision", "st_relate", "st_relatematch",
        "st_removepoint", "st_removerepeatedpoints", "st_reverse", "st_rotate", "st_rotatex",
        "st_rotatey", "st_rotatez", "st_scale", "st_scroll", "st_segmentize", "st_seteffectivearea",
        "st_setpoint", "st_setsrid", "st_sharedpaths", "st_shiftlongitude", "st_shortestline",
        "st_simplify", "st_simplifypolygonhull", "st_simplifypreservetopology", "st_simplifyvw",
        "st_snap", "st_snaptogrid", "st_split", "st_square", "st_squaregrid", "st_srid",
        "st_startpoint", "st_subdivide", "st_summary", "st_swapordinates", "st_symdifference",
        "st_symmetricdifference", "st_tileenvelope", "st_touches", "st_transform", "st_translate",
        "st_transscale", "st_triangulatepolygon", "st_unaryunion", "st_union", "st_voronoilines",
        "st_voronoipolygons", "st_within", "st_wkbtosql", "st_wkttosql", "st_wrapx", "st_x",
        "st_xmax", "st_xmin", "st_y", "st_ymax", "st_ymin", "st_z", "st_zmax", "st_zmflag",
        "st_zmin",
    )
)

POSTGIS_RASTER_FUNCTIONS: frozenset[str] = frozenset(
    (
        "st_addband", "st_approxcount", "st_approxhistogram", "st_approxquantile",
        "st_approxsummarystats", "st_asbinary", "st_asgdalraster", "st_ashexwkb", "st_asjpeg",
        "st_aspect", "st_aspng", "st_asraster", "st_astiff", "st_aswkb", "st_band",
        "st_bandisnodata", "st_bandmetadata", "st_bandnodatavalue", "st_bandpixeltype", "st_clip",
        "st_colormap", "st_contains", "st_containsproperly", "st_contour", "st_convexhull",
        "st_count", "st_countagg", "st_coveredby", "st_covers", "st_dfullywithin", "st_disjoint",
        "st_distinct4ma", "st_dumpaspolygons", "st_dumpvalues", "st_dwithin", "st_envelope",
        "st_georeference", "st_geotransform", "st_grayscale", "st_hasnoband", "st_height",
        "st_hillshade", "st_histogram", "st_interpolateraster", "st_intersection", "st_intersects",
        "st_invdistweight4ma", "st_iscoveragetile", "st_isempty", "st_makeemptycoverage",
        "st_makeemptyraster", "st_max4ma", "st_mean4ma", "st_memsize", "st_metadata", "st_min4ma",
        "st_minconvexhull", "st_mindist4ma", "st_minpossiblevalue", "st_nearestvalue",
        "st_neighborhood", "st_notsamealignmentreason", "st_numbands", "st_overlaps",
        "st_pixelascentroid", "st_pixelascentroids", "st_pixelaspoint", "st_pixelaspoints",
        "st_pixelaspolygon", "st_pixelaspolygons", "st_pixelheight", "st_pixelofvalue",
        "st_pixelwidth", "st_polygon", "st_quantile", "st_range4ma", "st_rastertoworldcoord",
        "st_rastertoworldcoordx", "st_rastertoworldcoordy", "st_rastfromhexwkb", "st_rastfromwkb",
        "st_reclass", "st_resample", "st_rescale", "st_resize", "st_reskew", "st_retile",
        "st_rotation", "st_roughness", "st_samealignment", "st_scalex", "st_scaley",
        "st_setbandindex", "st_setbandisnodata", "st_setbandnodatavalue", "st_setgeoreference",
        "st_setgeotransform", "st_setm", "st_setrotation", "st_setscale", "st_setskew",
        "st_setsrid", "st_setupperleft", "st_setvalue", "st_setvalues", "st_setz", "st_skewx",
        "st_skewy", "st_slope", "st_snaptogrid", "st_srid", "st_stddev4ma", "st_sum4ma",
        "st_summary", "st_summarystats", "st_summarystatsagg", "st_tile", "st_touches", "st_tpi",
        "st_transform", "st_tri", "st_union", "st_upperleftx", "st_upperlefty", "st_value",
        "st_valuecount", "st_valuepercent", "st_width", "st_within", "st_worldtorastercoord",
        "st_worldtorastercoordx", "st_worldtorastercoordy",
    )
)
"""The ``postgis_raster`` functions a ``postgis`` query may call (statistics, terrain, values)."""
