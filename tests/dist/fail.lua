-- A rank's error must end the whole job (tests/dist_spec.lua): rank 1
-- fails while the others wait in a collective.
if ml.dist.rank() == 1 then error("rank one gives up") end
ml.dist.all_reduce(ml.ones(3))
ml.dist.barrier()
