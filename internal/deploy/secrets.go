package deploy
